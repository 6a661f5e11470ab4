// Route files of the platform area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';
import { adminPlatformRoutes } from '../admin-platform.routes.ts';
import { oauthRoutes } from '../oauth.routes.ts';
import { opsRoutes } from '../ops.routes.ts';

export const platformRoutes: RouteRegistrar[] = [opsRoutes, oauthRoutes, adminPlatformRoutes];
