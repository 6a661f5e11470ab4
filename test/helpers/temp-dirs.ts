// Temporary directories for one test file, removed after its tests: the start-up tests spawn services on data dirs of
// their own, and each left its directory behind in the temp dir of the machine running the suite.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';

/** A maker of directories named `<prefix>XXXXXX` under the temp dir, each removed once the file's tests are done. */
export function tempDirs(prefix: string): () => string {
  const made: string[] = [];
  afterAll(() => {
    for (const d of made) fs.rmSync(d, { recursive: true, force: true });
  });
  return () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    made.push(d);
    return d;
  };
}
