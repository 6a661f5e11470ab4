// The service's own pino logger writing its JSON lines into an array, for the tests that read what the log says
// (outage lines, throttles, start-up warnings).
import { Writable } from 'node:stream';
import pino from 'pino';

export interface LogCapture {
  /** every line written, parsed, in order (clear it with `lines.length = 0`) */
  lines: Array<Record<string, unknown>>;
  logger: pino.Logger;
  /** the lines of one `event` */
  of(event: string): Array<Record<string, unknown>>;
  /** the lines whose message matches */
  saying(re: RegExp): Array<Record<string, unknown>>;
}

export function logCapture(level: pino.Level = 'info'): LogCapture {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
        done();
      },
    }),
  );
  return {
    lines,
    logger,
    of: (event) => lines.filter((l) => l.event === event),
    saying: (re) => lines.filter((l) => re.test(String(l.msg))),
  };
}
