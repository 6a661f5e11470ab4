// Personal API charger contracts (spec §2 "Charger (Personal API list item)", C4.9).
import { z } from 'zod';
import { SessionReview } from './sessions.ts';

export const ErrorBody = z.object({ error: z.string(), detail: z.string().optional() }).loose();

export const CurrentSession = z.object({
  id: z.uuid(),
  started_at: z.string(),
  kwh_so_far: z.number().describe('kWh, rounded to two decimals'),
  wh_so_far: z.number().int().describe('the same energy in whole watt-hours, for a view that shows it to the Wh beside latest_meter_wh'),
  id_tag: z.string().nullable(),
  estimated_euro: z.number(),
  review: SessionReview.describe('C5.5: held energy of the running session; null when nothing was flagged'),
});

export const ChargerItem = z.object({
  id: z.uuid(),
  nickname: z.string(),
  connection_type: z.enum(['ocpp', 'cloud_api']).describe('ocpp: the charger connects to this gateway over OCPP; cloud_api: registered by a CPO, its sessions reported through the CPO API'),
  status: z.enum(['online', 'offline']),
  mid_certified: z.boolean(),
  is_charging: z.boolean(),
  current_session: CurrentSession.optional().describe('only present while charging'),
  latest_meter_wh: z.number().int().optional().describe('watt-hours; absent before the first reading'),
  meter_updated_at: z.string().optional(),
});

export const ChargerList = z.object({ chargers: z.array(ChargerItem) });

export const CreateChargerBody = z.object({
  // spaces around it are removed; one of only spaces is refused (400 invalid_request)
  nickname: z.string().trim().min(1).max(100).regex(/\S/, 'must contain a character other than a space').describe('1 to 100 characters after trimming; at least one that is not a space'),
  connection_type: z.literal('ocpp'),
  ocpp_identity: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/).optional(),
  account_id: z.uuid().nullable().optional(),
});

export const CreatedCharger = ChargerItem.extend({
  ocpp: z.object({
    identity: z.string(),
    endpoint: z.string().describe('OCPP-J central system URL; the charger connects to <endpoint>/<identity>'),
    password: z.string().describe('HTTP Basic password (Security Profile 1/2); shown once'),
  }),
});
