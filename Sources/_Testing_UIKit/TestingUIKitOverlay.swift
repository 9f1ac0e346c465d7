// Swift Testing declares a cross-import overlay for the pair (Testing, UIKit): a file that imports both also imports a
// module named `_Testing_UIKit`, which Apple's platforms ship and Linux does not. Herald's `UIKit` depends on this empty
// module so that test files importing `Testing` and `UIKit` together compile on Linux. It holds nothing.
