// The typed database: every table once, with all its columns as the migrations define them, in files by subject.
import type { CoreTables } from './tables/core.ts';
import type { OnboardingTables } from './tables/onboarding.ts';
import type { OcppTables } from './tables/ocpp.ts';
import type { PartnerTables } from './tables/partner.ts';
import type { EnergyTables } from './tables/energy.ts';
import type { DashboardTables } from './tables/dashboard.ts';

export type * from './tables/core.ts';
export interface Database extends CoreTables, OnboardingTables, OcppTables, PartnerTables, EnergyTables, DashboardTables {}
