// The gateway is made with its store: whoever makes one sees the store's types as part of the gateway's API.
@_exported import HeraldGatewayStore
