// The meter a simulated charger keeps between runs (issue 13 item 7): a real charger's register never resets when
// its tester's process ends, so consecutive runs of one identity continue one meter. One small JSON file per
// identity in a state directory: the register per connector (Wh), the settings the central system changed
// (1.6 configuration keys / 2.0.1 variables) and a password it set (AuthorizationKey / BasicAuthPassword).
// The CLI keeps state for a single charger by default (in ~/.ere-simulator, never in the repository); the library
// and fleet mode only when given a directory (a benchmark's thousands of identities write nothing).
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';

export const MeterState = z.object({
  version: z.literal(1),
  identity: z.string(),
  /** register per connector / EVSE, integer Wh */
  registers: z.record(z.string().regex(/^\d+$/), z.number().int().nonnegative()),
  /** when the register was last read, per connector (ISO): a later run's sessions should start after it */
  lastReadingAt: z.record(z.string().regex(/^\d+$/), z.string()).default({}),
  /** writable settings as the central system left them */
  settings: z.record(z.string(), z.string()).default({}),
  /**
   * the password the central system set; `replaces` is the SHA-256 of the password the charger was given at that
   * time, so a run given that old password again uses the new one, and a run given another password uses that
   */
  password: z.object({ value: z.string(), replaces: z.string().nullable(), at: z.string() }).optional(),
  updatedAt: z.string(),
});
export type MeterState = z.infer<typeof MeterState>;

/** ERE_SIMULATOR_STATE_DIR, else ~/.ere-simulator */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ERE_SIMULATOR_STATE_DIR?.trim() || path.join(os.homedir(), '.ere-simulator');
}

/** one file per identity; the identity percent-encoded so that any identity is one safe file name */
export function stateFile(dir: string, identity: string): string {
  const name = encodeURIComponent(identity).replace(/^\./, '%2E');
  return path.join(dir, `${name}.json`);
}

export function passwordDigest(password: string | undefined): string | null {
  return password === undefined ? null : crypto.createHash('sha256').update(password).digest('hex');
}

/**
 * the password a run uses when the saved state holds one the central system set: that one, when the run was given
 * no password or the one it replaced; undefined: the given password
 */
export function savedPasswordFor(state: MeterState | undefined, given: string | undefined): MeterState['password'] | undefined {
  if (!state?.password) return undefined;
  const digest = passwordDigest(given);
  return digest === null || digest === state.password.replaces ? state.password : undefined;
}

/** the saved meter of this identity, or undefined when it has none; a damaged file is an error, not a reset */
export function loadMeterState(dir: string, identity: string): MeterState | undefined {
  const file = stateFile(dir, identity);
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = MeterState.safeParse(safeJson(text));
  if (!parsed.success || parsed.data.identity !== identity) {
    throw new Error(`${file} is not a simulator meter state for ${identity}; move it away to start this meter afresh`);
  }
  return parsed.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** written whole to a temporary file and renamed, so a killed process leaves the old state or the new one */
export function saveMeterState(dir: string, state: MeterState): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = stateFile(dir, state.identity);
  const tmp = `${file}.${process.pid}.tmp`;
  // it may hold a charger password: readable by the owner only
  fs.writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  fs.renameSync(tmp, file);
}
