// The simulator's --help text (simulator/cli.ts prints it); docs/simulator.md says the same at length.
import { QUIRKS } from './charge-point.ts';
import { defaultQuirks } from './scenarios/index.ts';

export const HELP = `Usage: npm run simulate -- --url ws://host:port/ocpp [options]

Connection
  --url URL              central system endpoint without the identity (ws:// or wss://), e.g. ws://localhost:8080/ocpp
  --identity ID          charge point identity (default SIM-0001; appended to --url)
  --password PW          Basic-auth password (Security Profile 1/2); visible in ps, prefer:
  --password-file FILE   the password on the file's first line (else $SIMULATOR_PASSWORD, if set)
  --csv FILE             identity,password per line (many charge points; a header line is skipped; CSV quoting:
                         a password with , or " is quoted, "" for a quote, as --write-csv writes it)
  --protocol P           ocpp1.6 (default) or ocpp2.0.1
  --vendor V --model M --serial S --firmware F   sent in BootNotification (default Alfen BV / NG910-60023)
  --connectors N         connectors (1.6) / EVSEs (2.0.1), default 1
  --timeout-ms MS        call timeout, default 30000
  --insecure             wss:// without verifying the certificate (self-signed test systems)
  --local-address A      source address of the connection(s) (spread a big fleet over 127.0.0.0/8)
  --spread-starts        load: each charger starts its transaction at its own phase of the first period and (with
                         --duration above two periods) stops it at its phase of the last, not all at once
  --replay-share F       load: the share (0-1) of periodic readings sent again as soon as they are answered, as a
                         charger does that missed the answer (replays, on top of --rate); default 0
  --idle-readings        load: no transactions; each charger sends its idle connector's register reading
                         (Sample.Clock, outside any transaction) at the rate instead
  --no-stop-data         1.6: send StopTransaction without transactionData (default: the end reading is included)

Scenario
  --scenario NAME        boot | session | month | offline | quirks | storm (single charger, default boot)
                         load | idle (fleet workloads; default for --count > 1: load)
  --energy WH            session: energy to deliver (default 10000 Wh)
  --power W              session/load: charging power, at least 1 (default 7400 W)
  --minutes N            session: duration, at least 1 (default: energy / power); with --realtime the live
                         session lasts N minutes at energy / minutes (give two of --energy, --power, --minutes)
  --meter-interval S     seconds between MeterValues (simulated; session 60, month 900, offline/quirks 600)
  --month YYYY-MM        month: the month to simulate, month 01-12 (default: previous month)
  --sessions N           month/offline/quirks: number of sessions
  --seed N               month/offline/quirks: random seed (same seed, same sessions)
  --realtime             session: real-time readings instead of compressed simulated time
  --quirks LIST          comma list of ${QUIRKS.join(', ')}
                         (quirks scenario default: ${defaultQuirks('ocpp1.6').join(',')};
                         no-subprotocol is 1.6 only)
  --id-tag TAG           session/month/offline/quirks: the id tag the sessions start with (default SIMTAG01); a
                         tag the central system does not accept is not charged on
  --stay                 after the scenario keep running and answer the central system (Ctrl-C to stop: a running
                         transaction is stopped, reason Local, and the energy delivered while staying printed)

Fleet
  --count N              number of charge points (1 to 1000000), identities PREFIX1..PREFIXN zero-padded to N's
                         width (PREFIX01..PREFIX10 for 10)
  --prefix P             identity prefix for --count (default SIM-<random>-)
  --register             register the identities on the ere-gateway first (Personal POST /chargers)
  --token T              personal token with chargers:write (for --register)
  --admin-token T        admin token: creates an owner + token, then registers (for --register)
  --api-url URL          gateway HTTP base for --register (default derived from --url)
  --write-csv FILE       save the registered identity,password pairs
  --ramp N               charge points started per second (default 50)
  --rate N               load: MeterValues per second for the whole fleet (0 = as fast as acknowledged; default 0)
  --duration S           load/idle: workload duration in seconds (default 10)
  --hold S               hold the connections idle for S seconds between ramp-up and workload
  --wait-go              after the ramp (before --hold) wait for a {"cmd":"go"} IPC message from the parent (a benchmark starting
                         the workloads of several driver processes together)
  --storm                after the workload drop every connection at once and measure reconnect + boot
  --storm-jitter MS      spread the storm's reconnects over MS (default 0: all at once)

Meter state (a charger's register continues across runs)
  --state-dir DIR        keep each charger's meter in DIR/<identity>.json (default for one charger:
                         $ERE_SIMULATOR_STATE_DIR or ~/.ere-simulator; fleet mode, --count or --csv even with
                         one charger, keeps no state unless given)
  --no-state             start from a new meter and keep nothing

Output
  --json                 machine-readable result on stdout
  --verbose              log connection events and every OCPP frame (→ sent, ← received) to stderr
  --help
`;
