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

export function createMailer(config: Config): Mailer | null {
  if (!config.SMTP_URL) return null;
  const transport = nodemailer.createTransport(config.SMTP_URL);
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


