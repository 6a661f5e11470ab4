// A fresh, empty PostgreSQL database next to DATABASE_URL for one benchmark run, dropped afterwards.
import crypto from 'node:crypto';
import pg from 'pg';

export async function freshDatabase(base: string, prefix: string): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const name = `${prefix}_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(base);
  u.pathname = '/' + name;
  return {
    url: u.toString(),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`).catch(() => {});
      await c.end();
    },
  };
}
