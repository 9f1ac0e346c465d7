/// An app's notification category as the device keeps it (`UNNotificationCategory`): what the console draws under an
/// expanded notification of it.
public struct TestBedCategory: Sendable, Equatable {
    /// A button under an expanded notification (`UNNotificationAction`, or `UNTextInputNotificationAction` when it has
    /// ``textInput``).
    public struct Action: Sendable, Equatable {
        /// A text input action's send button and the placeholder of its field.
        public struct TextInput: Sendable, Equatable {
            /// `textInputButtonTitle`.
            public var buttonTitle: String
            /// `textInputPlaceholder`.
            public var placeholder: String

            /// A text input's button title and placeholder.
            public init(buttonTitle: String, placeholder: String) {
                self.buttonTitle = buttonTitle
                self.placeholder = placeholder
            }
        }

        /// `identifier`.
        public var identifier: String
        /// `title`.
        public var title: String
        /// Whether its options hold `.destructive` (drawn in red).
        public var destructive: Bool
        /// For a text input action, its button and placeholder.
        public var textInput: TextInput?

        /// An action.
        ///
        /// - Parameters:
        ///   - identifier: Its identifier.
        ///   - title: The button's title.
        ///   - destructive: Whether it is destructive.
        ///   - textInput: A text input action's button and placeholder.
        public init(identifier: String, title: String, destructive: Bool = false, textInput: TextInput? = nil) {
            self.identifier = identifier
            self.title = title
            self.destructive = destructive
            self.textInput = textInput
        }
    }

    /// `identifier`: what a notification's `categoryIdentifier` names.
    public var identifier: String
    /// The actions an expanded notification shows, in order.
    public var actions: [Action]

    /// A category.
    ///
    /// - Parameters:
    ///   - identifier: Its identifier.
    ///   - actions: Its actions, in order.
    public init(identifier: String, actions: [Action]) {
        self.identifier = identifier
        self.actions = actions
    }
}
