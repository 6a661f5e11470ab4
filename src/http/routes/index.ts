// Every route file of the service, by area. grep a path to find its handler in routes/<resource>.routes.ts.
import type { RouteRegistrar } from '../types.ts';
import { platformRoutes } from './areas/platform.ts';
import { onboardingRoutes } from './areas/onboarding.ts';
import { ocppRoutes } from './areas/ocpp.ts';
import { partnerRoutes } from './areas/partner.ts';
import { energyRoutes } from './areas/energy.ts';

export const allRoutes: RouteRegistrar[] = [
  ...platformRoutes,
  ...onboardingRoutes,
  ...ocppRoutes,
  ...partnerRoutes,
  ...energyRoutes,
];
