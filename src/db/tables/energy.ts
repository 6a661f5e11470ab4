// Tables added by the energy migrations (migrations/00NN_*.sql owned by the energy area).
// Add each table's interface here and list it in EnergyTables.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EnergyTables {}
