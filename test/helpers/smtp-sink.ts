// A real SMTP server for the mail tests (smtp-server, no TLS, no AUTH) on 127.0.0.1 and a port of its own: it takes
// every message and keeps it in `received`, unless `rcpt` refuses the recipient with an SMTP code of the test's choice.
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
}

export interface SmtpSink {
  port: number;
  /** SMTP_URL for a service that sends here */
  url: string;
  /** the messages taken, in the order they were taken */
  received: ReceivedMail[];
  close(): Promise<void>;
}

export async function startSmtpSink(
  opts: {
    /** the answer to RCPT TO for an address: [code, text] refuses it, undefined takes it */
    rcpt?: (address: string) => [number, string] | undefined;
    /** runs once a whole message has arrived, before the server answers it and before it is in `received` */
    beforeAnswer?: (mail: ReceivedMail) => void | Promise<void>;
  } = {},
): Promise<SmtpSink> {
  const received: ReceivedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, cb) {
      const answer = opts.rcpt?.(address.address);
      if (answer) return cb(Object.assign(new Error(answer[1]), { responseCode: answer[0] }));
      cb();
    },
    onData(stream, session, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const mail = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString('utf8'),
        };
        void (async () => {
          await opts.beforeAnswer?.(mail);
          received.push(mail);
          cb();
        })();
      });
    },
  });
  await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', () => resolve()));
  const port = (smtp.server.address() as AddressInfo).port;
  return {
    port,
    url: `smtp://127.0.0.1:${port}`,
    received,
    close: () => new Promise<void>((resolve) => smtp.close(() => resolve())),
  };
}
