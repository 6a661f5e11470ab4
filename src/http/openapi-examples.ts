// Request examples of the operations whose body schema carries none itself (the CPO write bodies carry theirs in
// schemas/http). Each is a body the API accepts (test/http/openapi.test.ts sends every one of them).
import { EXAMPLE_EAN } from '../../schemas/http/common.ts';

export const REQUEST_EXAMPLES: Record<string, unknown> = {
  createToken: { grant_type: 'client_credentials', client_id: 'cpo_2f9d4c1a7b', client_secret: 'cs_your_client_secret', scope: 'cpo:accounts:write cpo:accounts:read' },
  uploadPartnerCustomers: {
    consent: true,
    send_invite: false,
    customers: [
      { name: 'Anna de Vries', email: 'anna.devries@gmail.com', external_ref: 'P-20117', postal_code: '1015 CJ', house_number: '12', ean: EXAMPLE_EAN },
      { type: 'zakelijk', name: 'Bakkerij Jansen', email: 'info@bakkerij-jansen.nl', company_name: 'Bakkerij Jansen B.V.', kvk: '12345678' },
    ],
  },
  importPartnerDrafts: {
    consent: true,
    source: 'csv',
    send_invite: false,
    csv: 'naam;emailadres;postcode;huisnummer\nPieter Bakker;pieter.bakker@gmail.com;3511 LX;8',
  },
  registerMyCharger: { nickname: 'Oprit', connection_type: 'ocpp', ocpp_identity: 'ALFEN-0042' },
  sandboxSignMandate: { full_name: 'Anna de Vries' },
  sandboxRegisterEre: { month: '2026-10' },
  sandboxRunEanRecheck: {},
};
