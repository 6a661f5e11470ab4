// POST /v1/accounts and GET /v1/accounts (spec §4.1, C2.1): CPO API accounts of the caller's partner.
import { accountInputOf, createCpoAccount, listCpoAccounts } from '../../domain/accounts/index.ts';
import { DomainError, isDomainError } from '../../domain/errors.ts';
import { principalOf } from '../auth.ts';
import { filterText } from '../validation-codes.ts';
import type { RouteRegistrar } from '../types.ts';
import { AccountList, CreateAccountBody, CreatedAccount, IdempotentAccount, ListAccountsQuery } from '../../../schemas/http/accounts.ts';
import { ErrorBody, errorOf } from '../../../schemas/http/onboarding-common.ts';

const tags = ['CPO API'];
const authErrors = { 401: ErrorBody, 403: ErrorBody, 429: ErrorBody };

export const accountsRoutes: RouteRegistrar = (app, deps) => {
  app.post(
    '/v1/accounts',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:write' } },
      schema: {
        tags,
        summary: 'Create a concept account for one connection (idempotent per cpo_external_ref)',
        body: CreateAccountBody,
        response: {
          201: CreatedAccount,
          200: IdempotentAccount.describe('re-post of an existing cpo_external_ref'),
          400: errorOf('invalid_type', 'invalid_payout_handler', 'invalid_iban', 'person_required', 'invalid_ean', 'address_required', 'invalid_json', 'invalid_request'),
          409: errorOf('ean_in_use'),
          422: errorOf('ean_address_mismatch', 'ean_not_dutch'),
          500: errorOf('account_create_failed', 'internal_error'),
          ...authErrors,
        },
      },
    },
    async (req, reply) => {
      const p = principalOf(req, 'cpo');
      const input = accountInputOf(deps, req.body);
      let res;
      try {
        res = await createCpoAccount(deps, p.partnerId, input);
      } catch (err) {
        if (isDomainError(err)) throw err;
        // spec §7: account_create_failed (C6.1: 500); the cause stays in the log, keyed by the request id
        req.log.error({ err }, 'account create failed');
        throw new DomainError('account_create_failed', `The account could not be created; retry the request (request ${req.id}).`);
      }
      const { account } = res;
      if (!res.created) {
        // spec §4.1 rules 1–3: a re-post of an existing cpo_external_ref
        return reply.code(200).send({ ok: true, idempotent: true, account_id: account.id, mandate_status: res.mandateStatus, iban_stored: res.ibanStored, account });
      }
      return reply.code(201).send({
        ok: true,
        account_id: account.id,
        connection_id: res.connectionId,
        location_id: res.locationId,
        ean_validation_status: res.eanValidationStatus,
        iban_stored: res.ibanStored,
        mandate_status: res.mandateStatus,
        account,
      });
    },
  );

  app.get(
    '/v1/accounts',
    {
      config: { auth: { accepts: ['cpo'], scope: 'cpo:accounts:read' } },
      schema: {
        tags,
        summary: 'List the CPO API accounts of the caller, with signatory and every connection (archived included)',
        querystring: ListAccountsQuery,
        response: { 200: AccountList, 400: errorOf('invalid_request'), ...authErrors },
      },
    },
    async (req) => {
      const p = principalOf(req, 'cpo');
      return listCpoAccounts(deps, p.partnerId, { ...req.query, cpo_external_ref: filterText('cpo_external_ref', req.query.cpo_external_ref) });
    },
  );
};
