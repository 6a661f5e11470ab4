// Public face of the connections area: the CPO correction (spec §4.1) and target lookup shared with mandate links.
export { updateConnection, ereBooked } from './update.ts';
export type { UpdateConnectionResponse } from './update.ts';
export { findTargetConnection, assertActive, assertTarget, hasTarget } from './target.ts';
export type { ConnectionRow, TargetInput } from './target.ts';
