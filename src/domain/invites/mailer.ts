// C3.5: SMTP delivery with nodemailer when SMTP_URL is set (smtp://user:pass@host:port, smtps://…).
// The instance is deps.mailer (built in src/main.ts by createMailer); without SMTP_URL there is none
// and messages stay queued in the outbox, visible through GET /admin/outbox.
import nodemailer from 'nodemailer';
import type { Config } from '../../config.ts';

export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  headers?: Record<string, string>;
}

export interface Mailer {
  send(mail: OutgoingMail): Promise<{ messageId: string }>;
  close(): void;
}

/**
 * D169: how long one message may hold the delivery run (and so a stopping service): nodemailer's defaults wait 2 minutes
 * for the connection, 30 s for the greeting and 10 minutes of silence mid-conversation. A server slower than these is
 * failing, and the message is retried later.
 */
export const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000, dnsTimeout: 10_000 } as const;

/** D226: the delivery run sends one message at a time, so one connection; nodemailer closes it after 4 idle minutes */
export const SMTP_POOL = { pool: true, maxConnections: 1, maxMessages: 100, maxRequeues: 0 } as const;

export function createMailer(config: Config, timeouts: Partial<Record<keyof typeof SMTP_TIMEOUTS, number>> = {}): Mailer | null {
  if (!config.SMTP_URL) return null;
  // settings written into SMTP_URL's query (?socketTimeout=…) win over these. D226: one pooled connection carries the
  // run's messages one after another (a connection and a greeting per message made a backlog drain at ~10 a second);
  // maxRequeues 0: a connection lost mid-message fails that message instead of the pool sending it again on its own,
  // since the server may have taken it (D169)
  const transport = nodemailer.createTransport({ ...SMTP_TIMEOUTS, ...SMTP_POOL, ...timeouts, url: config.SMTP_URL });
  return {
    async send(mail) {
      const info = await transport.sendMail({
        from: config.SMTP_FROM,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.headers ? { headers: mail.headers } : {}),
      });
      return { messageId: String(info.messageId) };
    },
    close() {
      transport.close();
    },
  };
}



