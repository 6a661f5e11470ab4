// Route files of the ocpp area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';
import { adminChargerCredentialsRoutes } from '../admin-charger-credentials.routes.ts';
import { adminChargersRoutes } from '../admin-chargers.routes.ts';
import { adminSessionsRoutes } from '../admin-sessions.routes.ts';
import { chargerStreamRoutes } from '../charger-stream.routes.ts';
import { personalChargersRoutes } from '../personal-chargers.routes.ts';
import { sessionsRoutes } from '../sessions.routes.ts';

export const ocppRoutes: RouteRegistrar[] = [personalChargersRoutes, chargerStreamRoutes, sessionsRoutes, adminChargersRoutes, adminChargerCredentialsRoutes, adminSessionsRoutes];
