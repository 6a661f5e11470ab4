// Tables added by the partner migrations (migrations/00NN_*.sql owned by the partner area).
// Add each table's interface here and list it in PartnerTables.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface PartnerTables {}
