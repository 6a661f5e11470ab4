// Route files of the platform area, registered in this order. Owned by that area: add yours here.
import type { RouteRegistrar } from '../../types.ts';
import { oauthRoutes } from '../oauth.routes.ts';

export const platformRoutes: RouteRegistrar[] = [oauthRoutes];
