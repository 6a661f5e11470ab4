-- The bundled MID catalog entries a start has offered to this database (D209). Every start adds the bundled models
-- and aliases the database does not have yet, so an upgrade's new models reach a database that already has a catalog;
-- an entry offered once is never offered again, so a model or alias the operator removed (by hand: the admin API only
-- adds and updates) is not put back at the next start. Keys as the catalog's unique indexes compare them: a model by
-- lower-case brand and model, an alias by its normalised vendor, model and match.
create table catalog_offered_models (
  brand text not null,
  model text not null,
  offered_at timestamptz not null default now(),
  primary key (brand, model)
);
create table catalog_offered_aliases (
  vendor text not null,
  model text not null,
  match text not null,
  offered_at timestamptz not null default now(),
  primary key (vendor, model, match)
);
