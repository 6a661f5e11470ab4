// D150: embedded PGlite is one process per data dir. A second process on the same DATA_DIR used to start, answer
// ready, and write into its own copy of the database that the first one overwrote (users created through it were
// gone after a restart). The data dir is now locked for the life of the process.
//
// The lock is a Unix domain socket the holder listens on: the kernel closes it when the holder dies, however it
// dies (kill -9 included), and no pid is compared, so a restarted container whose new process has the holder's pid
// is not mistaken for the holder. A second process finds the address in use and connects: accepted = a live
// holder, refused = the file a dead holder left, which is removed and listened on again. No native addon needed.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { reasonOf, StartFailure } from '../lib/start-failure.ts';

export interface DataDirLock {
  /** the socket file that holds the lock */
  file: string;
  release(): Promise<void>;
}

// a socket's path must fit sun_path: 108 bytes on Linux, 104 on macOS, each with its closing NUL
const MAX_SOCKET_PATH = 100;

/** Where the lock of this data dir (its real path) lives: inside it, or under the temp dir when that path is too long. */
export function lockSocketPath(realDir: string): string {
  const own = path.join(realDir, '.ere-gateway.lock');
  if (Buffer.byteLength(own) <= MAX_SOCKET_PATH) return own;
  const hash = crypto.createHash('sha256').update(realDir).digest('hex').slice(0, 32);
  return path.join(os.tmpdir(), `ere-gateway-${hash}.lock`);
}

/** Lock `dir` for this process, or throw a StartFailure naming DATA_DIR when a live process holds it. */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  fs.mkdirSync(dir, { recursive: true });
  const file = lockSocketPath(fs.realpathSync(dir));
  // a few rounds: two processes that both found a stale file race for it, and one of them then finds the other
  for (let round = 0; round < 5; round++) {
    const server = await listenOn(file);
    if (server) {
      server.unref(); // the lock must not keep a process alive that has nothing else to do
      return { file, release: () => new Promise((resolve) => server.close(() => resolve())) };
    }
    if (await heldByLiveProcess(file)) {
      throw new StartFailure(
        'DATA_DIR',
        `${path.resolve(dir)} is in use by another running ere-gateway process (embedded PGlite is one process per ` +
          'data dir); stop that one first, or give this one its own DATA_DIR, or run both on PostgreSQL (DATABASE_URL)',
      );
    }
    fs.rmSync(file, { force: true }); // left by a process that died: nobody listens on it
  }
  throw new StartFailure('DATA_DIR', `could not take the lock ${file}: another process keeps taking it`);
}

/** Listen on the socket file: the server, or null when the address is already in use. */
function listenOn(file: string): Promise<net.Server | null> {
  return new Promise((resolve, reject) => {
    const server = net.createServer((socket) => socket.end()); // an accepted connection is the answer "held"
    server.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') resolve(null);
      else reject(new StartFailure('DATA_DIR', `cannot create the lock ${file}: ${reasonOf(err)}`, { cause: err }));
    });
    server.listen(file, () => resolve(server));
  });
}

/** true when a process accepts connections on the socket file; false when none does (a stale file, or none). */
function heldByLiveProcess(file: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(file);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      socket.destroy();
      if (err.code === 'ECONNREFUSED' || err.code === 'ENOENT') resolve(false);
      else reject(new StartFailure('DATA_DIR', `cannot check the lock ${file}: ${reasonOf(err)}`, { cause: err }));
    });
  });
}
