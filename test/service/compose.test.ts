// docker-compose.yml, read as text (no Docker in the suite): D186 sandbox and production never share a database,
// D187 every key can be set through an env file.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';

const text = fs.readFileSync('docker-compose.yml', 'utf8');
/** the lines of one top-level service (two-space indented key) up to the next one */
function service(name: string): string {
  const m = new RegExp(`^  ${name}:\\n((?:(?!  \\S).*\\n|\\n)*)`, 'm').exec(text);
  if (!m) throw new Error(`no service ${name} in docker-compose.yml`);
  return m[1]!;
}
const dbOf = (svc: string) => /DATABASE_URL: (\S+)/.exec(service(svc))?.[1];

describe('docker-compose.yml', () => {
  it('D186: production is always production, and the sandbox has its own database server and volumes', () => {
    expect(text).not.toMatch(/\$\{APP_ENV/); // APP_ENV=sandbox docker compose up turned production's service into a sandbox
    expect(service('app')).toMatch(/APP_ENV: production\n/);
    expect(service('sandbox')).toMatch(/APP_ENV: sandbox\n/);
    expect(dbOf('app')).toBe('postgres://ere:ere@db:5432/ere');
    expect(dbOf('sandbox')).toBe('postgres://ere:ere@sandbox-db:5432/ere');
    const volumes = (svc: string) => [...service(svc).matchAll(/^\s+- ([\w-]+):\//gm)].map((m) => m[1]);
    expect(volumes('sandbox-db')).toEqual(['sandbox-pg-data']);
    expect(volumes('db')).toEqual(['pg-data']);
    expect(volumes('sandbox')).not.toContain('app-data');
    expect(service('sandbox')).toMatch(/profiles: \[sandbox\]/);
  });
});

describe('docker-compose.yml env file', () => {
  it('D187: the production service reads an optional env file, and lists no key it could not take from there', () => {
    expect(text).toMatch(/env_file:\n\s+- path: \$\{ENV_FILE:-\.env\}\n\s+required: false\n/);
    expect(service('app')).toMatch(/<<: \*app/);
    // a key given a value (even an empty default) in `environment:` would override the env file's
    for (const k of ['DATA_ENCRYPTION_KEY', 'ADMIN_TOKEN', 'PUBLIC_BASE_URL', 'LOG_LEVEL', 'OPERATOR_NAME', 'SMTP_URL']) {
      expect(service('app')).not.toMatch(new RegExp(`${k}: \\S`));
    }
  });
});
