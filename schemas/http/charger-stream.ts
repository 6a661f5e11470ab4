// GET /chargers/stream (C7.1): a text/event-stream, not JSON. The events' data are the items of GET /chargers
// (ChargerItem) and GET /sessions (Session); this schema documents the stream's framing for the OpenAPI document.
import { z } from 'zod';

export { ErrorBody } from './personal-chargers.ts';

export const ChargerStream = z
  .string()
  .describe(
    'text/event-stream. First one `charger` event per charger of yours (the snapshot), then a `charger` event whenever ' +
      'an item of GET /chargers changes, and a `session` event (a GET /sessions item) when a session ends or an ended ' +
      'session changes. Each event has an `id:`; reconnect with `Last-Event-ID` to resume: a fresh `charger` event per ' +
      'charger and the sessions ended since (within 24 h; a session may repeat: treat session events as idempotent by id). ' +
      'A `: keep-alive` comment line comes every 15 s.',
  )
  // the OpenAPI document lists the answer under this media type, not application/json (src/http/openapi.ts)
  .meta({ contentMediaType: 'text/event-stream' });
