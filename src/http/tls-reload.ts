// D261: a renewed certificate is taken without a restart. Certificates are renewed every 60–90 days (ACME, an
// internal CA), and a restart to take the new one drops every charger's socket: a reconnect storm of the whole fleet
// for a file change. The process watches TLS_CERT_FILE, TLS_KEY_FILE and TLS_CLIENT_CA_FILE (by polling the path, so a
// symbolic link that an ACME client moves to the new files is followed) and reloads on SIGHUP too (the cluster's
// primary passes it on to its workers). A new set is checked as at start (PEM, the key the certificate's) and then
// given to the running server (`setSecureContext`): new handshakes use it, open sockets keep theirs. A set that does
// not check (a key written after its certificate, a broken file) is refused with one warning and the old one kept; the
// next change is tried again. `tls_certificate_expiry_timestamp_seconds` says when the served certificate expires.
import crypto, { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import type { Server as HttpsServer } from 'node:https';
import { Gauge } from 'prom-client';
import type { Deps } from '../deps.ts';
import { tlsFileIssues } from '../lib/tls-files.ts';

/** How long after a change of one file the set is read (a certificate and its key are written one after the other). */
const SETTLE_MS = 1_000;

interface TlsSet {
  cert: Buffer;
  key: Buffer;
  ca?: Buffer;
}

function expiryGauge(deps: Deps): Gauge {
  const name = 'tls_certificate_expiry_timestamp_seconds';
  const existing = deps.metrics.getSingleMetric(name);
  if (existing) return existing as Gauge;
  return new Gauge({
    name,
    help: 'When the certificate the service port serves expires (Unix time, seconds); the earliest across workers',
    registers: [deps.metrics],
    aggregator: 'min',
  });
}

/** What a log line may say about a certificate (public facts only). */
function describe(cert: Buffer): { subject: string; not_after: string; fingerprint256: string; expiresAt: number } {
  const x = new X509Certificate(cert);
  const expiresAt = Date.parse(x.validTo);
  return { subject: x.subject.replace(/\n/g, ', '), not_after: new Date(expiresAt).toISOString(), fingerprint256: x.fingerprint256, expiresAt };
}

const digest = (s: TlsSet) => crypto.createHash('sha256').update(s.cert).update(s.key).update(s.ca ?? '').digest('hex');

/**
 * Watches the TLS files of `server` (an https server built from them) and reloads them on a change or SIGHUP.
 * Returns the stop function. Does nothing without TLS_CERT_FILE.
 */
export function watchTlsFiles(deps: Deps, server: HttpsServer): () => void {
  const { TLS_CERT_FILE: certFile, TLS_KEY_FILE: keyFile, TLS_CLIENT_CA_FILE: caFile } = deps.config;
  if (!certFile || !keyFile || typeof server.setSecureContext !== 'function') return () => {};
  const gauge = expiryGauge(deps);
  const read = (): TlsSet => ({ cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile), ...(caFile ? { ca: fs.readFileSync(caFile) } : {}) });
  let current: string;
  try {
    const first = read();
    current = digest(first);
    gauge.set(describe(first.cert).expiresAt / 1000);
  } catch {
    current = ''; // checked at start (config.ts); a file gone since is read again at the next change
  }

  const reload = (trigger: 'change' | 'SIGHUP'): void => {
    const issues = tlsFileIssues(certFile, keyFile, caFile);
    if (issues.length) {
      deps.logger.warn({ event: 'tls.reload_failed', trigger, issues: issues.map((i) => `${i.key}: ${i.message}`) }, 'the new TLS files were not taken; the service keeps serving the previous certificate');
      return;
    }
    let set: TlsSet;
    try {
      set = read();
    } catch (err) {
      deps.logger.warn({ event: 'tls.reload_failed', trigger, issues: [(err as Error).message] }, 'the new TLS files were not taken; the service keeps serving the previous certificate');
      return;
    }
    const d = digest(set);
    if (d === current) {
      if (trigger === 'SIGHUP') deps.logger.info({ event: 'tls.unchanged' }, 'TLS files unchanged');
      return;
    }
    server.setSecureContext({ cert: set.cert, key: set.key, ...(set.ca ? { ca: set.ca } : {}) });
    current = d;
    const { expiresAt, ...about } = describe(set.cert);
    gauge.set(expiresAt / 1000);
    deps.logger.info({ event: 'tls.reloaded', trigger, ...about }, 'TLS certificate reloaded: new connections use it');
  };

  let settle: NodeJS.Timeout | null = null;
  const changed = (): void => {
    if (settle) clearTimeout(settle);
    settle = setTimeout(() => ((settle = null), reload('change')), SETTLE_MS).unref();
  };
  const files = [certFile, keyFile, ...(caFile ? [caFile] : [])];
  const interval = deps.config.TLS_RELOAD_CHECK_SECONDS * 1000;
  for (const f of files) fs.watchFile(f, { interval, persistent: false }, changed);
  const onHup = (): void => reload('SIGHUP');
  process.on('SIGHUP', onHup);
  return () => {
    for (const f of files) fs.unwatchFile(f, changed);
    process.off('SIGHUP', onHup);
    if (settle) clearTimeout(settle);
  };
}
