// Package server is the A2C-SMCP signalling Server: authentication, offices
// (Socket.IO rooms), routing of client:* requests to one Computer, and
// notify:* broadcasts (PROTOCOL.md).
package server
