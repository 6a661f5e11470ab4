// Tables added by the onboarding migrations (migrations/00NN_*.sql owned by the onboarding area).
// Add each table's interface here and list it in OnboardingTables.
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface OnboardingTables {}
