// The shop's orders: made when a product page asks for one, priced when its cart is signed, paid or
// cancelled by webhooks. Kept in memory, and saved to a small JSON file when one is given (npm start gives
// ./data/demo-shop-orders.json), so that a restart of the shop does not forget what was paid.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

type OrderStatus = 'open' | 'pending' | 'paid' | 'cancelled' | 'review';

export interface Order {
  ref: string;
  /**
   * open: made, no cart signed yet (not listed); pending: a cart was signed; paid; cancelled; review: a
   * group paid an amount other than the cart the shop last priced for the order (not shipped).
   */
  status: OrderStatus;
  /** Cents: of the last cart signed, then of the session that paid. */
  total: number;
  currency: string;
  /** The Group Checkout session of this order, once an event named it. */
  session_id: string | null;
  created_at: string;
  updated_at: string;
}

interface Saved {
  orders: Order[];
  /** Ids of the webhook events already applied, newest last: a redelivery changes nothing. */
  events: string[];
}

/** Orders never checked out are forgotten first when there are more than this (every page view makes one). */
const MAX_OPEN_ORDERS = 1000;
/** Event ids remembered for deduplication; far more than can be in flight for a demo. */
const MAX_EVENT_IDS = 5000;

export class OrderBook {
  private readonly orders = new Map<string, Order>();
  private readonly events: string[] = [];
  private readonly eventSet = new Set<string>();

  constructor(private readonly file?: string) {
    if (file && existsSync(file)) {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved;
      for (const order of saved.orders) this.orders.set(order.ref, order);
      for (const id of saved.events) this.remember(id);
    }
  }

  /** A new open order with an id no one can guess or reuse. */
  open(now = new Date()): Order {
    const open = [...this.orders.values()].filter((o) => o.status === 'open');
    if (open.length >= MAX_OPEN_ORDERS) this.orders.delete((open[0] as Order).ref);
    const at = now.toISOString();
    const order: Order = {
      ref: `ORD-${randomBytes(5).toString('hex').toUpperCase()}`,
      status: 'open',
      total: 0,
      currency: 'usd',
      session_id: null,
      created_at: at,
      updated_at: at,
    };
    this.orders.set(order.ref, order);
    this.save();
    return order;
  }

  get(ref: string): Order | undefined {
    return this.orders.get(ref);
  }

  /** Orders that went to checkout, newest first. */
  list(): Order[] {
    return [...this.orders.values()].filter((o) => o.status !== 'open').reverse();
  }

  /** A cart was signed for the order: it is pending at that price until a webhook says otherwise. */
  priced(ref: string, total: number, currency: string): void {
    this.update(ref, (order) => {
      order.status = 'pending';
      order.total = total;
      order.currency = currency;
    });
  }

  /** True the first time an event id is seen; false for a redelivery, which must change nothing. */
  firstTime(eventId: string): boolean {
    if (this.eventSet.has(eventId)) return false;
    this.remember(eventId);
    return true;
  }

  update(ref: string, change: (order: Order) => void, now = new Date()): boolean {
    const order = this.orders.get(ref);
    if (!order) return false;
    change(order);
    order.updated_at = now.toISOString();
    this.save();
    return true;
  }

  /** Saves the book (when it has a file); also after firstTime, so a restart still knows the event. */
  save(): void {
    if (!this.file) return;
    mkdirSync(dirname(this.file), { recursive: true });
    const saved: Saved = { orders: [...this.orders.values()], events: this.events };
    const temporary = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(saved)}\n`, { mode: 0o600 });
    renameSync(temporary, this.file);
  }

  private remember(id: string): void {
    this.events.push(id);
    this.eventSet.add(id);
    if (this.events.length > MAX_EVENT_IDS) this.eventSet.delete(this.events.shift() as string);
  }
}
