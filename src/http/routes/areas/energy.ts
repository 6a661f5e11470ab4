// Route files of the energy area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';
import { adminEreRoutes } from '../admin-ere.routes.ts';
import { energyOverviewRoutes } from '../energy.routes.ts';
import { erePositionRoutes } from '../ere-position.routes.ts';
import { erePositionsRoutes } from '../ere-positions.routes.ts';
import { sandboxEnergyRoutes } from '../sandbox-energy.routes.ts';
import { sessionsBatchRoutes } from '../sessions-batch.routes.ts';

export const energyRoutes: RouteRegistrar[] = [
  sessionsBatchRoutes,
  energyOverviewRoutes,
  erePositionRoutes,
  erePositionsRoutes,
  adminEreRoutes,
  sandboxEnergyRoutes,
];
