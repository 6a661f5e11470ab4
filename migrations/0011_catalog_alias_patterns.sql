-- Catalog aliases get a third kind, 'pattern': a glob over the reported model ('*' any run of characters,
-- '?' one character), for SKU families whose MID option sits in the middle of the type code
-- (KEBA KC-P30-EC2401B2-M0R vs …-E00; ABB TAC-W22-T-R-M-0 vs …-C-0), where a prefix cannot tell them apart.
alter table catalog_aliases drop constraint if exists catalog_aliases_match_check;
alter table catalog_aliases add constraint catalog_aliases_match_check check (match in ('exact', 'prefix', 'pattern'));
