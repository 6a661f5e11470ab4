// Route files of the partner area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';

export const partnerRoutes: RouteRegistrar[] = [];
