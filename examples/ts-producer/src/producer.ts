// A toolgate producer in TypeScript: it publishes one provider response on
// toolgate.in.response (a tenant's on its own toolgate.in.t.<tenant>.response,
// the only ingest subject its producer-<tenant> user may publish on) with the
// Toolgate-* headers (the same contract as
// pkg/producer), waits for the outcomes of its tool calls on
// toolgate.results.<tenant>.<response-id> (with --partitions P > 1, perhaps
// with a fifth token .p<k>), and prints them as JSON lines.
//
//   npm ci && npx tsc -p . && node dist/producer.js ../responses/valid-invoice.json
//
// Environment: NATS_URL (default nats://127.0.0.1:4222), NATS_USER and
// NATS_PASSWORD (a producer user: `producer`, or `producer-<tenant>`),
// TOOLGATE_PROVIDER (default openai-chat), TOOLGATE_TENANT, TOOLGATE_TOKEN,
// TOOLGATE_CALLS (how many tool calls to wait for, default 1) and
// TOOLGATE_WAIT_MS (default 30000). Exit 0 when every call executed.
import { readFileSync } from "node:fs";
import { connect, headers, type ConnectionOptions, type Msg } from "nats";

interface Outcome {
  call_id?: string;
  response_id: string;
  tool?: string;
  status: string;
  ok: boolean;
  errors?: string[];
  result?: unknown;
  message?: unknown;
}

// tenantToken is toolgate's subject token for a tenant (pkg/wire
// TenantToken) for the plain names a producer user is made for.
function tenantToken(tenant: string): string {
  if (tenant === "") return "_";
  if (/^[A-Za-z0-9_-]{1,64}$/.test(tenant) && tenant !== "_") return tenant;
  throw new Error(`tenant ${JSON.stringify(tenant)}: use 1-64 letters, digits, '-' or '_'`);
}

async function main(): Promise<number> {
  const file = process.argv[2];
  if (!file) {
    console.error("usage: node dist/producer.js RESPONSE.json");
    return 2;
  }
  const body = new Uint8Array(readFileSync(file));
  const env = process.env;
  const tenant = env.TOOLGATE_TENANT ?? "";
  const calls = Number(env.TOOLGATE_CALLS ?? "1");
  const waitMs = Number(env.TOOLGATE_WAIT_MS ?? "30000");
  const responseId = env.TOOLGATE_RESPONSE_ID ?? `ts-${Date.now()}-${Math.floor(Math.random() * 1e9)}`;
  const user = env.NATS_USER ?? "";
  const opts: ConnectionOptions = { servers: env.NATS_URL ?? "nats://127.0.0.1:4222" };
  if (user !== "") {
    opts.user = user;
    opts.pass = env.NATS_PASSWORD ?? "";
    opts.inboxPrefix = `_INBOX_${user}`; // toolgate's users read replies only there
  }
  const nc = await connect(opts);
  try {
    // Subscribe before publishing: results are plain messages, not replayed.
    // The tenant's results, this response's kept below: with --partitions
    // P > 1 a response of partition k >= 1 has them on
    // toolgate.results.<tenant>.<response-id>.p<k>.
    const sub = nc.subscribe(`toolgate.results.${tenantToken(tenant)}.>`);
    const h = headers();
    h.set("Toolgate-Provider", env.TOOLGATE_PROVIDER ?? "openai-chat");
    h.set("Toolgate-Response-Id", responseId);
    if (tenant !== "") h.set("Toolgate-Tenant", tenant);
    if (env.TOOLGATE_TOKEN) h.set("Toolgate-Token", env.TOOLGATE_TOKEN);
    // A tenant's responses go on its own subject: toolgate takes the tenant
    // from it, and refuses a Toolgate-Tenant header on the shared subject
    // where no issuer verifies it (tenant_not_granted).
    const subject = tenant === "" ? "toolgate.in.response" : `toolgate.in.t.${tenantToken(tenant)}.response`;
    const ack = await nc.jetstream().publish(subject, body, { headers: h, msgID: `${responseId}:${tenantToken(tenant)}` });
    console.error(`published ${responseId} (stream ${ack.stream}, seq ${ack.seq}${ack.duplicate ? ", duplicate" : ""})`);

    const outcomes: Outcome[] = [];
    const seen = new Set<string>();
    const timer = setTimeout(() => sub.unsubscribe(), waitMs);
    for await (const m of sub as AsyncIterable<Msg>) {
      if (m.subject.split(".")[3] !== responseId) continue; // another response of the tenant
      const o = m.json<Outcome>();
      if (o.call_id === undefined) {
        outcomes.push(o); // the response's own outcome: no call will come
        break;
      }
      if (seen.has(o.call_id)) continue; // a stage redelivered it
      seen.add(o.call_id);
      outcomes.push(o);
      if (seen.size >= calls) break;
    }
    clearTimeout(timer);
    for (const o of outcomes) console.log(JSON.stringify(o));
    if (outcomes.length === 0) {
      console.error(`no outcome within ${waitMs} ms`);
      return 1;
    }
    return outcomes.every((o) => o.status === "executed") ? 0 : 1;
  } finally {
    await nc.drain();
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error("ts-producer:", err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
