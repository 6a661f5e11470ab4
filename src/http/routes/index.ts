// Every route file of the service, in the order they are registered. grep a path to find its handler in
// routes/<resource>.routes.ts; a new API route also needs its line in src/http/openapi-operations.ts.
import type { RouteRegistrar } from '../types.ts';
import { mandatePageRoutes } from '../pages/mandate-page.ts';
import { accountsRoutes } from './accounts.routes.ts';
import { adminCatalogRoutes } from './admin-catalog.routes.ts';
import { adminChargerCredentialsRoutes } from './admin-charger-credentials.routes.ts';
import { adminChargersRoutes } from './admin-chargers.routes.ts';
import { adminEanRegisterRoutes } from './admin-ean-register.routes.ts';
import { adminEreRoutes } from './admin-ere.routes.ts';
import { adminPartnerRoutes } from './admin-partner.routes.ts';
import { adminPlatformRoutes } from './admin-platform.routes.ts';
import { adminSessionsRoutes } from './admin-sessions.routes.ts';
import { catalogRoutes } from './catalog.routes.ts';
import { chargerStreamRoutes } from './charger-stream.routes.ts';
import { claimRoutes } from './claim.routes.ts';
import { connectionsRoutes } from './connections.routes.ts';
import { cpoChargersRoutes } from './cpo-chargers.routes.ts';
import { dashboardRoutes } from './dashboard.routes.ts';
import { energyOverviewRoutes } from './energy.routes.ts';
import { erePositionRoutes } from './ere-position.routes.ts';
import { erePositionsRoutes } from './ere-positions.routes.ts';
import { mandateLinksRoutes } from './mandate-links.routes.ts';
import { oauthRoutes } from './oauth.routes.ts';
import { opsRoutes } from './ops.routes.ts';
import { partnerRoutes } from './partner.routes.ts';
import { personalChargersRoutes } from './personal-chargers.routes.ts';
import { sandboxEnergyRoutes } from './sandbox-energy.routes.ts';
import { sandboxOnboardingRoutes } from './sandbox-onboarding.routes.ts';
import { sessionsBatchRoutes } from './sessions-batch.routes.ts';
import { sessionsRoutes } from './sessions.routes.ts';

export const allRoutes: RouteRegistrar[] = [
  opsRoutes,
  oauthRoutes,
  adminPlatformRoutes,
  accountsRoutes,
  connectionsRoutes,
  mandateLinksRoutes,
  cpoChargersRoutes,
  catalogRoutes,
  adminCatalogRoutes,
  adminEanRegisterRoutes,
  sandboxOnboardingRoutes,
  mandatePageRoutes,
  personalChargersRoutes,
  chargerStreamRoutes,
  sessionsRoutes,
  adminChargersRoutes,
  adminChargerCredentialsRoutes,
  adminSessionsRoutes,
  partnerRoutes,
  claimRoutes,
  adminPartnerRoutes,
  sessionsBatchRoutes,
  energyOverviewRoutes,
  erePositionRoutes,
  erePositionsRoutes,
  adminEreRoutes,
  sandboxEnergyRoutes,
  dashboardRoutes,
];
