// Public face of the accounts area: CPO account create/list (spec §4.1) and the concept account of a claimed
// partner draft (C3.4), plus the derived eligibility (C2.8).
export { createCpoAccount, createConceptAccount, accountMandateStatus } from './create.ts';
export type { ConceptAccountInput, CreateAccountResult } from './create.ts';
export { listCpoAccounts } from './list.ts';
export type { ListedAccount, ListedConnection } from './list.ts';
export { accountInputOf, normaliseIban } from './validate.ts';
export { eligibilityFacts, isEligible, isAccountEreEligible, eligibleSql } from './eligibility.ts';
