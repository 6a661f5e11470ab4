// D189, D261: whether the TLS files of the service port can be served: readable, PEM, the key the certificate's, and
// the client CA file (Security Profile 3) a PEM certificate. Checked at start (config.ts) and before a reload
// (src/http/tls-reload.ts). The messages name the variable and the file, never the content.
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import fs from 'node:fs';

export interface TlsFileIssue {
  key: string;
  message: string;
}

export function tlsFileIssues(certFile: string, keyFile: string, caFile?: string): TlsFileIssue[] {
  const read = (key: string, file: string): Buffer | TlsFileIssue => {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      return { key, message: `cannot read ${file}: ${(err as { code?: string }).code ?? String(err)}` };
    }
  };
  const certPem = read('TLS_CERT_FILE', certFile);
  const keyPem = read('TLS_KEY_FILE', keyFile);
  const caPem = caFile ? read('TLS_CLIENT_CA_FILE', caFile) : undefined;
  const out = [certPem, keyPem, caPem].filter((x): x is TlsFileIssue => x !== undefined && !Buffer.isBuffer(x));
  if (out.length) return out;
  let cert: X509Certificate | undefined;
  let privateKey: KeyObject | undefined;
  try {
    cert = new X509Certificate(certPem as Buffer);
  } catch {
    out.push({ key: 'TLS_CERT_FILE', message: `${certFile} is not a PEM certificate (-----BEGIN CERTIFICATE-----)` });
  }
  try {
    privateKey = createPrivateKey(keyPem as Buffer);
  } catch {
    out.push({ key: 'TLS_KEY_FILE', message: `${keyFile} is not a PEM private key (-----BEGIN PRIVATE KEY-----), or it is encrypted` });
  }
  if (cert && privateKey && !cert.checkPrivateKey(privateKey)) {
    out.push({ key: 'TLS_KEY_FILE', message: `${keyFile} is not the private key of the certificate in TLS_CERT_FILE (${certFile})` });
  }
  if (caFile && Buffer.isBuffer(caPem)) {
    try {
      new X509Certificate(caPem);
    } catch {
      out.push({ key: 'TLS_CLIENT_CA_FILE', message: `${caFile} is not a PEM certificate (-----BEGIN CERTIFICATE-----)` });
    }
  }
  return out;
}
