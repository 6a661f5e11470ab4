// Route files of the ocpp area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';

export const ocppRoutes: RouteRegistrar[] = [];
