-- Energy and ERE (issue 6): the review trail of a month, the ERE booked at registration, and the ERE ledger
-- (C5.1, C5.3): the operator's sales, the allocation of registered ERE to sales and the payouts.
-- Kept to PostgreSQL 15 features.

-- C5.3: ERE booked for a registered month, fixed at registration with the factor of its compliance year,
-- so a later change of RENEWABLE_SHARE never rewrites a booked month.
alter table energy_months add column ere numeric(14,2);
alter table energy_months add column review_started_at timestamptz;
alter table energy_months add column rejected_at timestamptz;
alter table energy_months add column review_note text;
create index energy_months_status_month on energy_months(status, month);

-- An ERE sale the operator made for a quarter ('2026-Q3'): ERE count and price per ERE (3 decimals).
create table ere_sales (
  id uuid primary key default gen_random_uuid(),
  quarter text not null check (quarter ~ '^\d{4}-Q[1-4]$'),
  ere numeric(14,2) not null check (ere > 0),
  price_per_ere numeric(10,3) not null check (price_per_ere >= 0),
  note text,
  created_at timestamptz not null default now()
);

-- Registered ERE of an account allocated to a sale: reserved → payable → paid (C5.3).
-- fee_pct and paid_to are fixed when the allocation is made (fee per account, else partner, else ERE_FEE_PCT;
-- via_cpo_invoicing accounts are settled to the partner).
create table ere_allocations (
  id uuid primary key default gen_random_uuid(),
  sale_id uuid not null references ere_sales(id),
  account_id uuid not null references accounts(id),
  compliance_year integer not null,
  ere numeric(14,2) not null check (ere > 0),
  fee_pct numeric(5,2) not null,
  status text not null default 'reserved' check (status in ('reserved', 'payable', 'paid')),
  payout_id uuid,
  created_at timestamptz not null default now(),
  payable_at timestamptz,
  paid_at timestamptz
);
create index ere_allocations_account on ere_allocations(account_id, compliance_year);
create index ere_allocations_sale on ere_allocations(sale_id);

-- A payout of payable allocations: to the customer, or to the partner for via_cpo_invoicing accounts.
create table ere_payouts (
  id uuid primary key default gen_random_uuid(),
  account_id uuid not null references accounts(id),
  paid_to text not null check (paid_to in ('customer', 'partner')),
  partner_id uuid references partners(id),
  ere numeric(14,2) not null,
  net_cents bigint not null,
  reference text,
  paid_at timestamptz not null,
  created_at timestamptz not null default now()
);
create index ere_payouts_account on ere_payouts(account_id);
