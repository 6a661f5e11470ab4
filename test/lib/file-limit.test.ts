// D117: the start warns when the connection caps allow more sockets than the limit on open files leaves room for.
import { describe, expect, it } from 'vitest';
import { fileLimitWarning, openFileLimit } from '../../src/lib/file-limit.ts';

const limits = (files: string) => () =>
  `Limit                     Soft Limit           Hard Limit           Units     \nMax cpu time              unlimited            unlimited            seconds   \nMax open files            ${files}                ${files}                files     \n`;

describe('the limit on open files', () => {
  it('is read from /proc/self/limits; unlimited or unreadable is no limit', () => {
    expect(openFileLimit(limits('20000'))).toBe(20_000);
    expect(openFileLimit(limits('unlimited'))).toBeNull();
    expect(openFileLimit(() => { throw new Error('no /proc'); })).toBeNull();
    if (process.platform === 'linux') expect(openFileLimit()).toBeGreaterThan(0); // this process's own
  });

  it('warns when the caps (35,000 by default) exceed it, not when it leaves room', () => {
    const defaults = { OCPP_MAX_CONNECTIONS: 25_000, HTTP_MAX_CONNECTIONS: 10_000 };
    expect(fileLimitWarning(defaults, 20_000)).toEqual({ limit: 20_000, sockets: 35_000 });
    expect(fileLimitWarning(defaults, 1_048_576)).toBeNull();
    expect(fileLimitWarning({ OCPP_MAX_CONNECTIONS: 15_000, HTTP_MAX_CONNECTIONS: 4_000 }, 20_000)).toBeNull();
    expect(fileLimitWarning(defaults, null)).toBeNull();
  });
});
