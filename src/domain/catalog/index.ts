// Public face of the catalog: the one resolver (resolve.ts), listing, loading (bundled file, admin API).
export { resolveCatalogModel, normaliseReported } from './resolve.ts';
export type { CatalogModel, ResolveResult } from './resolve.ts';
export { listMidModels, findCatalogModel } from './list.ts';
export type { CatalogListItem } from './list.ts';
export { upsertCatalogModel, loadBundledCatalog, BUNDLED_CATALOG, CatalogEntry, CatalogAlias } from './load.ts';
export type { CatalogEntryInput } from './load.ts';
