// The user dashboard (C7.2, migrations/0060_dashboard.sql): one-time sign-in links and signed-in sessions, each kept
// only as the hash of its secret. (The columns 0060 adds to personal_tokens are in core.ts with that table.)
import type { Generated } from 'kysely';
import type { NullableTimestamp, Timestamp } from './core.ts';

/** A one-time sign-in link of the dashboard: 15 minutes, used once. */
export interface DashboardSignInLinksTable {
  id: Generated<string>;
  user_id: string;
  token_hash: string;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
  created_at: Generated<Date>;
}

/** A signed-in dashboard session (the cookie's hash) and its CSRF token. */
export interface DashboardSessionsTable {
  id: Generated<string>;
  user_id: string;
  token_hash: string;
  csrf_token: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export interface DashboardTables {
  dashboard_sign_in_links: DashboardSignInLinksTable;
  dashboard_sessions: DashboardSessionsTable;
}
