// Route files of the partner area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';
import { partnerRoutes as partnerApiRoutes } from '../partner.routes.ts';
import { claimRoutes } from '../claim.routes.ts';
import { adminPartnerRoutes } from '../admin-partner.routes.ts';

export const partnerRoutes: RouteRegistrar[] = [partnerApiRoutes, claimRoutes, adminPartnerRoutes];
