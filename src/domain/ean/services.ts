// The onboarding area's services (src/services.ts): the EAN register of this process (C2.7).
// EAN_REGISTER_URL set → the HTTP adapter; otherwise the embedded table-backed register.
import type { Deps, Services } from '../../deps.ts';
import { HttpEanRegister, TableEanRegister, type EanRegister } from './register.ts';

export function onboardingServices(deps: Deps): Services {
  const eanRegister: EanRegister = deps.config.EAN_REGISTER_URL
    ? new HttpEanRegister(deps.config.EAN_REGISTER_URL, deps.config.EAN_REGISTER_TOKEN)
    : new TableEanRegister(deps.db);
  return { eanRegister };
}
