// Tables added by the ocpp migrations (migrations/00NN_*.sql owned by the ocpp area).
// Add each table's interface here and list it in OcppTables.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface OcppTables {}
