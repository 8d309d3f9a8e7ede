// Package deploy holds no code: its tests render the Kubernetes manifests
// (kustomize) and load docker-compose.yml with the specifications' own
// loaders, and check them against toolgate's stages and NATS users.
package deploy
