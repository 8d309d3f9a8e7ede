package wire

// HeaderToken carries the producer's identity token on an ingest message: a
// JWT its platform's issuer signed. Where a deployment configures an issuer,
// tenant, principal and roles come only from it, and Toolgate-Tenant,
// Toolgate-Principal and Toolgate-Roles are ignored.
const HeaderToken = "Toolgate-Token"
