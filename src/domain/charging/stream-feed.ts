// C7.1 what one push stream (GET /chargers/stream) sends to one user, without the transport: `charger` events with
// the GET /chargers item (listChargerItems, re-read from PostgreSQL, sent only when it differs from the last one
// sent), and `session` events with the GET /sessions item of a session that ended (or, once ended, changed again:
// a late stop replacing a provisional end, a review decision).
//
// Event ids are the database's clock in milliseconds at the read that produced the event, kept strictly
// increasing per stream. A resume (Last-Event-ID = T) sends a fresh `charger` event for every charger (the state
// is current, so nothing of it can be missed) and a `session` event for every session of the user's chargers that
// ended or changed since T − RESUME_MARGIN_MS. Sessions are found by charging_sessions.updated_at, which every write
// of an ended session (and the write that ends one) stamps with now() (its transaction's start; only a running
// session's readings leave it alone, D85): a write committed within the margin of its stamp is never missed,
// at the price of an occasional repeat (session events are idempotent by session id). See docs/api.md.
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { type ChargerItem, listChargerItems, listSessionItems, type SessionItem } from './personal-views.ts';
import { throttledLog } from '../../lib/throttled-log.ts';

export type FeedEvent = { id: string; event: 'charger'; data: ChargerItem } | { id: string; event: 'session'; data: SessionItem };

/** How long a write may take from its updated_at stamp (transaction start) to its commit, with room to spare */
export const RESUME_MARGIN_MS = 60_000;
/** A Last-Event-ID older than this resumes with the chargers' state only (C7.1: "when too old") */
export const RESUME_MAX_AGE_MS = 24 * 3600_000;
/** At most one read per stream in this window: the pushes of a busy charger are coalesced (the brief's ~200 ms) */
export const COALESCE_MS = 200;
const MAX_SESSIONS_PER_READ = 200;

export class ChargerFeed {
  /** the user's chargers as of the last full read: the ids this stream listens for */
  readonly chargerIds = new Set<string>();
  private readonly sentItem = new Map<string, string>();
  private readonly sentSession = new Map<string, number>();
  /** per charger: the database time of the last read of its sessions */
  private readonly checkedAt = new Map<string, number>();
  private lastId = 0;
  private dirty = new Set<string>();
  private dirtyAll = false;
  private running: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private lastRun = 0;
  private closed = false;
  private opened = false;
  private early = new Set<string>();

  constructor(
    private readonly deps: Deps,
    private readonly userId: string,
    private readonly emit: (e: FeedEvent) => void,
    /** told when the set of chargers this stream listens for grows or shrinks */
    private readonly watch: (added: string[], removed: string[]) => void = () => {},
  ) {}

  /** The snapshot: every charger of the user, then (on a resume from `lastEventId`) the sessions missed since. */
  async open(lastEventId: string | undefined): Promise<void> {
    const resumeFrom = lastEventId && /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : null;
    if (resumeFrom !== null) this.lastId = resumeFrom;
    const { asOf } = await this.sessionsSince([], 0); // the database's time, before anything is read
    const items = await listChargerItems(this.deps, this.userId);
    this.sendItems(items, asOf, true);
    for (const i of items) this.checkedAt.set(i.id, asOf);
    if (resumeFrom !== null && asOf - resumeFrom <= RESUME_MAX_AGE_MS) {
      await this.sendSessions([...this.chargerIds], resumeFrom - RESUME_MARGIN_MS);
    }
    this.opened = true;
    this.lastRun = Date.now();
    // what changed while the snapshot was read (the hub hands an opening stream every id)
    this.changed(this.early);
    this.early = new Set();
    this.schedule(); // a refreshAll asked for during the snapshot
  }

  /** These chargers changed (a bus event); read within COALESCE_MS. */
  changed(ids: Iterable<string>): void {
    if (!this.opened) {
      for (const id of ids) this.early.add(id);
      return;
    }
    for (const id of ids) if (this.chargerIds.has(id)) this.dirty.add(id);
    this.schedule();
  }

  /** Read every charger again (periodically, and after the bus reconnected: events may have been lost). */
  refreshAll(): void {
    this.dirtyAll = true;
    this.schedule();
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    // nothing runs beside the snapshot: open() schedules what was asked meanwhile when it is done
    if (!this.opened || this.closed || this.timer || this.running || (!this.dirtyAll && this.dirty.size === 0)) return;
    const wait = Math.max(0, this.lastRun + COALESCE_MS - Date.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.run().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, wait);
  }

  private async run(): Promise<void> {
    const all = this.dirtyAll;
    const ids = [...this.dirty];
    this.dirtyAll = false;
    this.dirty = new Set();
    this.lastRun = Date.now();
    try {
      if (all) {
        const { asOf } = await this.sessionsSince([], 0);
        const items = await listChargerItems(this.deps, this.userId);
        const gone = new Set(this.chargerIds);
        for (const i of items) gone.delete(i.id);
        for (const id of gone) this.forget(id);
        this.sendItems(items, asOf, true);
        // a charger new to this stream: its sessions from now on
        for (const i of items) if (!this.checkedAt.has(i.id)) this.checkedAt.set(i.id, asOf);
        // every charger's sessions too: a safety net for a lost event, and it keeps every charger's window short
        const every = [...this.chargerIds];
        if (every.length) await this.sendSessions(every, this.since(every));
      } else if (ids.length) {
        const since = this.since(ids);
        const sessions = await this.sessionsSince(ids, since);
        this.sendItems(await listChargerItems(this.deps, this.userId, ids), sessions.asOf, false);
        await this.sendFound(ids, sessions);
      }
    } catch (err) {
      if (this.closed) return;
      // D232: every open stream retries each second during an outage: once a minute per process, with a count
      throttledLog(this.deps.logger).event('warn', 'stream.read_failed', { err, userId: this.userId }, 'charger stream: read failed; retried');
      for (const id of ids) this.dirty.add(id);
      this.dirtyAll ||= all;
      this.lastRun = Date.now() + 1000; // back off a second
    }
  }

  private forget(id: string): void {
    this.chargerIds.delete(id);
    this.watch([], [id]);
    this.sentItem.delete(id);
    this.checkedAt.delete(id);
  }

  private since(ids: string[]): number {
    let min = Infinity;
    for (const id of ids) min = Math.min(min, this.checkedAt.get(id) ?? 0);
    return (Number.isFinite(min) ? min : 0) - RESUME_MARGIN_MS;
  }

  private nextId(asOf: number): string {
    this.lastId = Math.max(this.lastId + 1, asOf);
    return String(this.lastId);
  }

  private sendItems(items: ChargerItem[], asOf: number, full: boolean): void {
    if (this.closed) return;
    for (const item of items) {
      if (full && !this.chargerIds.has(item.id)) {
        this.chargerIds.add(item.id);
        this.watch([item.id], []);
      }
      const json = JSON.stringify(item);
      if (this.sentItem.get(item.id) === json) continue;
      this.sentItem.set(item.id, json);
      if (!this.closed) this.emit({ id: this.nextId(asOf), event: 'charger', data: item });
    }
  }

  private async sendSessions(ids: string[], since: number): Promise<void> {
    await this.sendFound(ids, await this.sessionsSince(ids, since));
  }

  private async sendFound(ids: string[], found: { asOf: number; rows: Array<{ id: string; at: number }> }): Promise<void> {
    for (const id of ids) if (this.chargerIds.has(id)) this.checkedAt.set(id, found.asOf);
    const fresh = found.rows.filter((r) => this.sentSession.get(r.id) !== r.at);
    // forget what can no longer come back (older than the margin): the map stays small on a long-lived stream
    for (const [id, at] of this.sentSession) if (at < found.asOf - 3 * RESUME_MARGIN_MS) this.sentSession.delete(id);
    if (fresh.length === 0) return;
    const { sessions } = await listSessionItems(this.deps, this.userId, { limit: fresh.length, offset: 0, ids: fresh.map((r) => r.id) });
    const byId = new Map(sessions.map((s) => [s.id, s]));
    for (const r of fresh) {
      const s = byId.get(r.id);
      if (!s || s.status !== 'completed') continue;
      this.sentSession.set(r.id, r.at);
      if (!this.closed) this.emit({ id: this.nextId(found.asOf), event: 'session', data: s });
    }
  }

  /** The database's time now, and the ended sessions of these chargers written since `since` (ms), oldest first. */
  private async sessionsSince(ids: string[], since: number): Promise<{ asOf: number; rows: Array<{ id: string; at: number }> }> {
    const match = ids.length
      ? sql`s.charger_id in (${sql.join(ids)}) and s.status = 'completed' and s.updated_at >= ${new Date(Math.max(0, since))}`
      : sql`false`;
    const { rows } = await sql<{ as_of: Date; id: string | null; updated_at: Date | null }>`
      select n.as_of, s.id, s.updated_at
        from (select now() as as_of) n
        left join charging_sessions s on ${match}
       order by s.updated_at desc nulls last
       limit ${MAX_SESSIONS_PER_READ}`.execute(this.deps.db);
    const asOf = new Date(rows[0]!.as_of).getTime();
    // the newest MAX_SESSIONS_PER_READ, sent oldest first
    const found = rows.filter((r) => r.id !== null).map((r) => ({ id: r.id!, at: new Date(r.updated_at!).getTime() }));
    return { asOf, rows: found.reverse() };
  }
}
