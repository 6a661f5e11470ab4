// C4.11: a transaction that fails for a reason that says nothing about the data is run again with backoff, a few
// times; anything else is thrown at once (src/db/transient.ts withTransientRetry).
import { describe, expect, it } from 'vitest';
import { isDataDbError, isTransientDbError, withTransientRetry } from '../../src/db/transient.ts';

const transient = () => Object.assign(new Error('could not serialize access'), { code: '40001' });
const dataError = () => Object.assign(new Error('value too long'), { code: '22001' });

describe('withTransientRetry', () => {
  it('runs once when the first attempt succeeds', async () => {
    let calls = 0;
    await expect(withTransientRetry(async () => ++calls)).resolves.toBe(1);
    expect(calls).toBe(1);
  });

  it('runs again after a transient error, saying so, and gives the later result', async () => {
    let calls = 0;
    const retries: number[] = [];
    const out = await withTransientRetry(
      async () => {
        calls += 1;
        if (calls < 3) throw transient();
        return 'done';
      },
      { baseMs: 1, onRetry: (_err, attempt) => retries.push(attempt) },
    );
    expect(out).toBe('done');
    expect(calls).toBe(3);
    expect(retries).toEqual([1, 2]);
  });

  it('throws an error caused by the data at once', async () => {
    let calls = 0;
    const err = dataError();
    await expect(
      withTransientRetry(async () => {
        calls += 1;
        throw err;
      }, { baseMs: 1 }),
    ).rejects.toBe(err);
    expect(calls).toBe(1);
  });

  it('throws the last transient error when the attempts run out', async () => {
    let calls = 0;
    const errors: Error[] = [];
    const p = withTransientRetry(
      async () => {
        calls += 1;
        const e = transient();
        errors.push(e);
        throw e;
      },
      { tries: 3, baseMs: 1 },
    );
    await expect(p).rejects.toBeInstanceOf(Error);
    await p.catch((e) => expect(e).toBe(errors[2]));
    expect(calls).toBe(3);
  });

  it('turns a function that throws before returning a promise into a rejection (and retries it the same way)', async () => {
    let calls = 0;
    const fn = (): Promise<string> => {
      calls += 1;
      if (calls === 1) throw transient();
      return Promise.resolve('second');
    };
    await expect(withTransientRetry(fn, { baseMs: 1 })).resolves.toBe('second');
    expect(calls).toBe(2);
  });
});

// D263: an attempt that already waited out a timeout (the client-side bound of a round trip, 35 s by default) is not
// repeated three more times: a charger's message then got no answer at all within its own CALL timeout.
describe('withTransientRetry: the retry budget (D263)', () => {
  it('begins no new attempt once budgetMs has passed since the first began', async () => {
    let calls = 0;
    const slowFailure = async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 80));
      throw Object.assign(new Error('Query read timeout: the database did not answer within 80 ms'), { code: '08006' });
    };
    await expect(withTransientRetry(slowFailure, { budgetMs: 50, baseMs: 1 })).rejects.toMatchObject({ code: '08006' });
    expect(calls).toBe(1);
  });

  it("node-postgres' own read timeout is transient", () => {
    expect(isTransientDbError(new Error('Query read timeout'))).toBe(true);
  });
});

describe('isTransientDbError', () => {
  const pgError = (code: string) => Object.assign(new Error(`error ${code}`), { code });
  it("is true for the database's own state, whatever its SQLSTATE class (D104), and false for the data's fault and for bugs", () => {
    // 55000 "database … is not currently accepting connections" was a bug to the ingest: acknowledged and quarantined
    for (const code of ['55000', '55006', '25006', '28P01', '3D000', '53100', '53200', '57P01', '58030', 'XX000', '42501', '08006', '40001']) {
      expect([code, isTransientDbError(pgError(code))]).toEqual([code, true]);
    }
    // 54000: an index row too large is the value's fault; refused, the charger would send it again for ever
    for (const code of ['22001', '22P05', '23514', '42601', '42703', '0A000', '54000']) expect([code, isTransientDbError(pgError(code))]).toEqual([code, false]);
    expect(isDataDbError(pgError('55000'))).toBe(false);
  });
});
