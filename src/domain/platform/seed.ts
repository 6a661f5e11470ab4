// C1.7 first start: catalog, demo partner (key + CPO client), demo user (token), demo OCPP charger.
// Owned by the platform area.
import type { Deps } from '../../deps.ts';

export interface DemoCredentials {
  [k: string]: unknown;
}

export async function seedSandbox(_deps: Deps): Promise<DemoCredentials | null> {
  return null;
}
