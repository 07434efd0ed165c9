/** What the connect sequence reads (PROTOCOL.md §0.3): descriptor, auth session, ticket. */
import type { AuthSession, EnvironmentDescriptor } from "../model.ts";
import { bad, record, str, strOrNull } from "./json.ts";

export function decodeDescriptor(raw: unknown): EnvironmentDescriptor {
	const obj = record(raw, "environment descriptor");
	const out: EnvironmentDescriptor = { ...obj };
	if (typeof obj.serverVersion !== "string") delete out.serverVersion;
	// Absent on servers that predate negotiation: that means protocol 1 (PROTOCOL.md §1.1).
	if (typeof obj.orchestrationProtocolVersion !== "number")
		delete out.orchestrationProtocolVersion;
	return out;
}

export function decodeAuthSession(raw: unknown): AuthSession {
	const obj = record(raw, "auth session");
	const out: AuthSession = {
		...obj,
		authenticated: obj.authenticated === true,
	};
	if (Array.isArray(obj.scopes))
		out.scopes = obj.scopes.filter((s): s is string => typeof s === "string");
	else delete out.scopes;
	return out;
}

export function decodeTicket(raw: unknown): {
	ticket: string;
	expiresAt: string | null;
} {
	const obj = record(raw, "websocket ticket");
	const ticket = str(obj.ticket);
	if (!ticket) throw bad("websocket ticket", "<ticket missing>");
	return { ticket, expiresAt: strOrNull(obj.expiresAt) };
}
