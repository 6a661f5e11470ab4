// Start-up progress of one service (issue 10 item 10): GET /readyz answers 200 only once it is complete
// (migrations, catalog, sandbox seed and the demo credentials file written). Kept under deps.services.startup.
import type { Services } from '../deps.ts';

export interface StartupState {
  /** what start-up is doing now, for the 503 detail */
  step: string;
  complete: boolean;
}

export function beginStartup(services: Services, step: string): StartupState {
  const s: StartupState = { step, complete: false };
  services.startup = s;
  return s;
}

/** undefined when the app was built without startService (nothing to wait for) */
export function startupOf(services: Services): StartupState | undefined {
  return services.startup as StartupState | undefined;
}
