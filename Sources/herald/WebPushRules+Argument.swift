import ArgumentParser
import HeraldWebPush

extension WebPushRules: ExpressibleByArgument {}
