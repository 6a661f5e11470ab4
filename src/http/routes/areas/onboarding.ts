// Route files of the onboarding area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';
import { accountsRoutes } from '../accounts.routes.ts';
import { connectionsRoutes } from '../connections.routes.ts';
import { mandateLinksRoutes } from '../mandate-links.routes.ts';
import { cpoChargersRoutes } from '../cpo-chargers.routes.ts';
import { catalogRoutes } from '../catalog.routes.ts';
import { adminCatalogRoutes } from '../admin-catalog.routes.ts';
import { adminEanRegisterRoutes } from '../admin-ean-register.routes.ts';
import { sandboxOnboardingRoutes } from '../sandbox-onboarding.routes.ts';
import { mandatePageRoutes } from '../../pages/mandate-page.ts';

export const onboardingRoutes: RouteRegistrar[] = [
  accountsRoutes,
  connectionsRoutes,
  mandateLinksRoutes,
  cpoChargersRoutes,
  catalogRoutes,
  adminCatalogRoutes,
  adminEanRegisterRoutes,
  sandboxOnboardingRoutes,
  mandatePageRoutes,
];
