package dev.llmquota.autoconfigure;

import java.beans.PropertyDescriptor;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.time.Duration;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

import org.springframework.beans.BeanUtils;
import org.springframework.boot.context.properties.bind.AbstractBindHandler;
import org.springframework.boot.context.properties.bind.BindContext;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.IterableConfigurationPropertySource;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.Environment;
import org.springframework.core.env.PropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

/**
 * The shape of {@code llm.quota.*} as {@link LlmQuotaProperties} defines it, to tell a
 * user who wrote a key that does not exist which one they meant.
 */
final class PropertyKeys {

	private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of("llm.quota");

	/** The variables Kubernetes sets in every pod for a Service named llm-quota. */
	private static final Pattern SERVICE_LINK = Pattern
		.compile("LLM_QUOTA_(SERVICE_HOST|SERVICE_PORT(_.*)?|PORT(_\\d+_(TCP|UDP|SCTP)(_(PROTO|PORT|ADDR))?)?)");

	private PropertyKeys() {
	}

	/**
	 * What is wrong with a key that bound to nothing, and the key that was probably
	 * meant.
	 *
	 * @param reason what is wrong, for people
	 * @param suggestion the full key probably meant, or {@code null} if none is close
	 * @param valid the valid names where the key went wrong
	 */
	record Diagnosis(String reason, String suggestion, List<String> valid) {

	}

	/**
	 * Diagnoses a key under {@code llm.quota} that bound to nothing.
	 * @param name the key
	 * @return what is wrong with it
	 */
	static Diagnosis diagnose(ConfigurationPropertyName name) {
		if (!ROOT.isAncestorOf(name)) {
			return new Diagnosis("it is not under llm.quota", null, List.of());
		}
		Type current = LlmQuotaProperties.class;
		StringBuilder path = new StringBuilder("llm.quota");
		for (int i = ROOT.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
			Class<?> raw = raw(current);
			String element = name.getElement(i, ConfigurationPropertyName.Form.DASHED);
			if (Map.class.isAssignableFrom(raw)) {
				if (listItem(name, i)) {
					return listForMap(path);
				}
				String key = name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL);
				Type value = argument(current, 1);
				Diagnosis dotted = dottedKey(name, i, value, path);
				if (dotted != null) {
					return dotted;
				}
				path.append(key.contains(".") ? "[" + key + "]" : "." + key);
				current = value;
				continue;
			}
			if (Collection.class.isAssignableFrom(raw)) {
				if (!name.isNumericIndex(i)) {
					return new Diagnosis(path + " is a list: its elements are written " + path + "[0], " + path + "[1]",
							null, List.of());
				}
				path.append('[').append(element).append(']');
				current = argument(current, 0);
				continue;
			}
			Map<String, Type> properties = properties(raw);
			if (properties.isEmpty()) {
				return new Diagnosis(path + " takes a value, not properties below it", path.toString(), List.of());
			}
			Type next = properties.get(element);
			if (next == null) {
				String rest = rest(name, i + 1);
				// a key with more below it meant a property that takes more below it
				// (models, not mode)
				List<String> candidates = properties.entrySet()
					.stream()
					.filter((property) -> rest.isEmpty() || takesMore(raw(property.getValue())))
					.map(Map.Entry::getKey)
					.toList();
				String nearest = nearest(element, candidates);
				return new Diagnosis("no such property under " + path,
						(nearest != null) ? path + "." + nearest + rest : null, List.copyOf(properties.keySet()));
			}
			path.append('.').append(element);
			current = next;
		}
		return new Diagnosis(path + " takes properties below it, not a value", null, List.of());
	}

	/**
	 * Whether an element is a YAML list's first item ({@code [0]}): a bracketed numeric
	 * id ({@code "[2024]":}, an Azure deployment named by a number) reads the same, but
	 * every list has a first item, so only {@code [0]} is taken for one.
	 */
	private static boolean listItem(ConfigurationPropertyName name, int index) {
		return name.isNumericIndex(index)
				&& "0".equals(name.getElement(index, ConfigurationPropertyName.Form.ORIGINAL));
	}

	private static Diagnosis listForMap(CharSequence path) {
		return new Diagnosis(path + " is a map of entries by id, not a list: in YAML write each entry as a key"
				+ " (openai:, gpt-4o:), not as a list item (- openai:)", null, List.of());
	}

	/**
	 * Returns the map a key writes as a list ({@code models[0].requests-per-minute}, from
	 * YAML's {@code - requests-per-minute: 500}), or {@code null}: Spring Boot binds it
	 * as the entry {@code 0}, which no call names.
	 */
	private static Diagnosis listUnderMap(ConfigurationPropertyName name) {
		Type current = LlmQuotaProperties.class;
		StringBuilder path = new StringBuilder("llm.quota");
		for (int i = ROOT.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
			Class<?> raw = raw(current);
			if (Map.class.isAssignableFrom(raw)) {
				if (listItem(name, i)) {
					return listForMap(path);
				}
				path.append('.').append(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL));
				current = argument(current, 1);
			}
			else if (Collection.class.isAssignableFrom(raw)) {
				path.append('[').append(name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL)).append(']');
				current = argument(current, 0);
			}
			else {
				String element = name.getElement(i, ConfigurationPropertyName.Form.DASHED);
				Type next = properties(raw).get(element);
				if (next == null) {
					return null;
				}
				path.append('.').append(element);
				current = next;
			}
		}
		return null;
	}

	/**
	 * A map key written with dots but without brackets ({@code models.gpt-4.1.x}) is read
	 * as nested keys; says so when the brackets would make the key bind.
	 */
	private static Diagnosis dottedKey(ConfigurationPropertyName name, int index, Type value, StringBuilder path) {
		Map<String, Type> properties = properties(raw(value));
		if (properties.isEmpty() || index + 1 >= name.getNumberOfElements()
				|| properties.containsKey(name.getElement(index + 1, ConfigurationPropertyName.Form.DASHED))) {
			return null;
		}
		StringBuilder key = new StringBuilder(name.getElement(index, ConfigurationPropertyName.Form.ORIGINAL));
		for (int j = index + 1; j < name.getNumberOfElements() - 1; j++) {
			key.append('.').append(name.getElement(j, ConfigurationPropertyName.Form.ORIGINAL));
			String property = name.getElement(j + 1, ConfigurationPropertyName.Form.DASHED);
			if (properties.containsKey(property)) {
				String suggestion = path + "[" + key + "]" + rest(name, j + 1);
				return new Diagnosis("the key '" + key + "' holds dots, so it was read as nested keys; in YAML write it"
						+ " as \"[" + key + "]\" (or set its name: property under a plain key)", suggestion, List.of());
			}
		}
		return null;
	}

	/**
	 * Stops start-up for a key under {@code llm.quota} holding a character Spring Boot
	 * drops from a key written without brackets (anything but letters, digits, '-', '_'
	 * and the dots between keys): {@code models.llama3:8b} binds as the model
	 * {@code llama38b}, which no call names, and its limits would govern nothing.
	 * @param environment the environment whose property sources are read
	 * @throws InvalidQuotaPropertyException for the first such key
	 */
	static void checkKeptCharacters(Environment environment) {
		if (!(environment instanceof ConfigurableEnvironment configurable)) {
			return;
		}
		for (PropertySource<?> source : configurable.getPropertySources()) {
			if (!(source instanceof EnumerablePropertySource<?> enumerable)) {
				continue;
			}
			for (String name : enumerable.getPropertyNames()) {
				if (name.startsWith("llm.quota.")) {
					// a credential's value is never shown
					Object value = name.contains(".headers") ? "(not shown)" : source.getProperty(name);
					checkKeptCharacters(name, value);
					Diagnosis list = listUnderMap(ConfigurationPropertyName.adapt(name, '.'));
					if (list != null) {
						throw new InvalidQuotaPropertyException(name, value, list.reason(),
								"write the entry under a key of its own, its id.");
					}
				}
			}
		}
	}

	/**
	 * Records the names a binding bound, for {@link #unboundVariables}.
	 */
	static final class Bound extends AbstractBindHandler {

		private final Set<String> names = new HashSet<>();

		Bound(BindHandler parent) {
			super(parent);
		}

		@Override
		public Object onSuccess(ConfigurationPropertyName name, Bindable<?> target, BindContext context,
				Object result) {
			this.names.add(squeezed(name.toString()));
			return super.onSuccess(name, target, context, result);
		}

	}

	/**
	 * Returns the environment variables under {@code LLM_QUOTA_} that set nothing (a
	 * mistyped name), for a warning: Spring Boot binds a variable by its letters and
	 * digits alone ({@code LLM_QUOTA_MAX_WAIT} is {@code llm.quota.max-wait}), so one
	 * that matches no bound property's letters and digits bound to nothing. Not a stop:
	 * such a name may be the application's own, read with {@code @Value}. Left out: one a
	 * placeholder names ({@code ${LLM_QUOTA_OPENAI_KEY}}), an empty one, and the ones
	 * Kubernetes sets for a Service named llm-quota ({@code LLM_QUOTA_SERVICE_HOST},
	 * {@code LLM_QUOTA_PORT_8080_TCP}).
	 * @param environment the environment whose variables are read
	 * @param bound what the binding bound
	 * @return the variables' names
	 */
	static List<String> unboundVariables(Environment environment, Bound bound) {
		List<String> unbound = new ArrayList<>();
		if (!(environment instanceof ConfigurableEnvironment configurable)) {
			return unbound;
		}
		for (PropertySource<?> source : configurable.getPropertySources()) {
			if (!(source instanceof SystemEnvironmentPropertySource variables)) {
				continue;
			}
			for (String name : variables.getPropertyNames()) {
				String upper = name.toUpperCase(Locale.ROOT);
				Object value = variables.getProperty(name);
				if (upper.startsWith("LLM_QUOTA_") && !SERVICE_LINK.matcher(upper).matches() && value != null
						&& !value.toString().isBlank() && !bound.names.contains(squeezed(name))
						&& !placeholderNames(configurable, name)) {
					unbound.add(name);
				}
			}
		}
		return unbound;
	}

	/**
	 * Stops start-up where an environment variable set a provider entry's header whose
	 * name has a dash: Spring Boot binds a map key's underscores as dots, so
	 * {@code LLM_QUOTA_PROVIDERS_AZURE_HEADERS_API_KEY} sets a header named
	 * {@code api.key}, which no provider reads, and the credential would be lost in
	 * silence.
	 * @param environment the environment whose variables are read
	 * @param properties the bound properties
	 * @throws InvalidQuotaPropertyException for the first such header
	 */
	static void checkHeaderVariables(Environment environment, LlmQuotaProperties properties) {
		if (!(environment instanceof ConfigurableEnvironment configurable)) {
			return;
		}
		properties.getProviders()
			.forEach((id, provider) -> List.copyOf(provider.getHeaders().keySet()).forEach((name) -> {
				if (!name.contains(".")) {
					return;
				}
				String property = "llm.quota.providers." + id + ".headers." + name;
				for (PropertySource<?> source : configurable.getPropertySources()) {
					if (source instanceof SystemEnvironmentPropertySource variables) {
						for (String variable : variables.getPropertyNames()) {
							if (!squeezed(variable).equals(squeezed(property))) {
								continue;
							}
							if (placeholderNames(configurable, variable)) {
								// read through a placeholder, the fix named below: this
								// copy is Spring Boot's own binding of it, no header
								provider.getHeaders().remove(name);
								return;
							}
							throw new InvalidQuotaPropertyException(property, "(hidden)",
									"the environment variable " + variable
											+ " set it, and Spring Boot reads each _ of a map key as a dot, so the"
											+ " header would go out named '" + name + "', which no provider reads",
									"set the header in application.yml, the variable as its value: llm.quota.providers."
											+ id + ".headers." + name.replace('.', '-') + ": ${" + variable + "}.");
						}
					}
				}
			}));
	}

	/**
	 * Whether a property's value (not a variable's) names a variable as a placeholder.
	 */
	private static boolean placeholderNames(ConfigurableEnvironment environment, String variable) {
		String placeholder = "${" + variable;
		for (PropertySource<?> source : environment.getPropertySources()) {
			if (source instanceof EnumerablePropertySource<?> enumerable
					&& !(source instanceof SystemEnvironmentPropertySource)) {
				for (String name : enumerable.getPropertyNames()) {
					Object value = enumerable.getProperty(name);
					if (value != null && value.toString().contains(placeholder)) {
						return true;
					}
				}
			}
		}
		return false;
	}

	/** A name's letters and digits, in lower case: what a variable binds by. */
	private static String squeezed(String name) {
		StringBuilder letters = new StringBuilder(name.length());
		for (int i = 0; i < name.length(); i++) {
			char c = name.charAt(i);
			if (Character.isLetterOrDigit(c)) {
				letters.append(Character.toLowerCase(c));
			}
		}
		return letters.toString();
	}

	/**
	 * Returns the first property set under a prefix, in any property source.
	 * @param environment the environment
	 * @param prefix the prefix
	 * @return the property's name, if one is set
	 */
	static Optional<String> firstUnder(Environment environment, String prefix) {
		ConfigurationPropertyName root = ConfigurationPropertyName.of(prefix);
		for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
			if (source instanceof IterableConfigurationPropertySource iterable) {
				Optional<ConfigurationPropertyName> found = iterable.stream().filter(root::isAncestorOf).findFirst();
				if (found.isPresent()) {
					return Optional.of(found.get().toString());
				}
			}
		}
		return Optional.empty();
	}

	private static void checkKeptCharacters(String name, Object value) {
		int depth = 0;
		int start = 0;
		for (int i = 0; i <= name.length(); i++) {
			char c = (i < name.length()) ? name.charAt(i) : '.';
			if (c == '[') {
				depth++;
			}
			else if (c == ']') {
				depth--;
			}
			else if (depth == 0 && c == '.') {
				start = i + 1;
			}
			else if (depth == 0 && !kept(c)) {
				int end = name.indexOf('.', i);
				String key = name.substring(start, (end < 0) ? name.length() : end);
				StringBuilder kept = new StringBuilder();
				key.chars().filter((k) -> kept((char) k)).forEach((k) -> kept.append((char) k));
				// in a properties file, ':', '=', '#', '!' and spaces in a key are
				// escaped
				String escaped = key.replaceAll("([:=#! ])", "\\\\$1");
				throw new InvalidQuotaPropertyException(name, value,
						"its key '" + key + "' holds '" + c + "', which Spring Boot drops from a key written without"
								+ " brackets: it would bind as '" + kept + "', which no call names",
						"in YAML write the key as \"[" + key + "]\" (in a properties file "
								+ name.substring(0, start - 1) + "[" + escaped + "]"
								+ ((end < 0) ? "" : name.substring(end)) + "), or set its name: property under a plain"
								+ " key.");
			}
		}
	}

	/** Whether Spring Boot keeps a character of a key written without brackets. */
	private static boolean kept(char c) {
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
	}

	private static String rest(ConfigurationPropertyName name, int from) {
		StringBuilder rest = new StringBuilder();
		for (int i = from; i < name.getNumberOfElements(); i++) {
			String element = name.getElement(i, ConfigurationPropertyName.Form.ORIGINAL);
			rest.append(name.isNumericIndex(i) ? "[" + element + "]" : "." + element);
		}
		return rest.toString();
	}

	/**
	 * Returns the bindable properties of a type by their dashed names, or none for a
	 * value type.
	 */
	static Map<String, Type> properties(Class<?> type) {
		Map<String, Type> properties = new TreeMap<>();
		if (isValue(type)) {
			return properties;
		}
		for (PropertyDescriptor descriptor : BeanUtils.getPropertyDescriptors(type)) {
			Method getter = descriptor.getReadMethod();
			if (getter == null || getter.getDeclaringClass() == Object.class) {
				continue;
			}
			Type propertyType = getter.getGenericReturnType();
			// a property binds through its setter, or, for a nested object,
			// through its getter
			if (descriptor.getWriteMethod() != null || !isValue(raw(propertyType))) {
				properties.put(dashed(descriptor.getName()), propertyType);
			}
		}
		return properties;
	}

	/** Whether a property takes keys below it: a map, a list or an object. */
	private static boolean takesMore(Class<?> type) {
		return Map.class.isAssignableFrom(type) || Collection.class.isAssignableFrom(type) || !isValue(type);
	}

	private static boolean isValue(Class<?> type) {
		return type.isPrimitive() || type.isEnum() || Number.class.isAssignableFrom(type) || type == Boolean.class
				|| type == String.class || type == Duration.class || type == ZoneId.class
				|| type.getName().startsWith("java.");
	}

	private static String dashed(String camel) {
		StringBuilder dashed = new StringBuilder();
		for (char c : camel.toCharArray()) {
			if (Character.isUpperCase(c)) {
				dashed.append('-').append(Character.toLowerCase(c));
			}
			else {
				dashed.append(c);
			}
		}
		return dashed.toString();
	}

	private static Class<?> raw(Type type) {
		if (type instanceof Class<?> cls) {
			return cls;
		}
		if (type instanceof ParameterizedType parameterized) {
			return (Class<?>) parameterized.getRawType();
		}
		return Object.class;
	}

	private static Type argument(Type type, int index) {
		return (type instanceof ParameterizedType parameterized) ? parameterized.getActualTypeArguments()[index]
				: Object.class;
	}

	/**
	 * The valid name closest to the given one, if it is close enough to be a typo; a name
	 * that begins the other (or that the other begins) is closer than one as many edits
	 * away.
	 */
	static String nearest(String name, Collection<String> valid) {
		String best = null;
		int bestScore = Integer.MAX_VALUE;
		for (String candidate : valid) {
			boolean prefix = candidate.startsWith(name) || name.startsWith(candidate);
			int distance = distance(name, candidate);
			if (distance > Math.max(2, name.length() / 3) && !prefix || otherPeriod(name, candidate)) {
				continue;
			}
			int score = distance * 2 - (prefix ? 1 : 0);
			if (score < bestScore) {
				best = candidate;
				bestScore = score;
			}
		}
		return best;
	}

	/**
	 * Whether two limits name different periods ({@code requests-per-second} is not a
	 * misspelled {@code requests-per-day}): renamed, a limit would count another period.
	 */
	private static boolean otherPeriod(String name, String candidate) {
		int mine = name.lastIndexOf("-per-");
		int theirs = candidate.lastIndexOf("-per-");
		if (mine < 0 || theirs < 0) {
			return false;
		}
		String period = name.substring(mine + 5);
		String other = candidate.substring(theirs + 5);
		return !period.isEmpty() && !other.startsWith(period) && !period.startsWith(other)
				&& distance(period, other) > 2;
	}

	private static int distance(String a, String b) {
		int[] previous = new int[b.length() + 1];
		int[] current = new int[b.length() + 1];
		for (int j = 0; j <= b.length(); j++) {
			previous[j] = j;
		}
		for (int i = 1; i <= a.length(); i++) {
			current[0] = i;
			for (int j = 1; j <= b.length(); j++) {
				int cost = (a.charAt(i - 1) == b.charAt(j - 1)) ? 0 : 1;
				current[j] = Math.min(Math.min(current[j - 1] + 1, previous[j] + 1), previous[j - 1] + cost);
			}
			int[] swap = previous;
			previous = current;
			current = swap;
		}
		return previous[b.length()];
	}

	/**
	 * Returns every valid name directly under a path, for messages.
	 * @param valid the names
	 * @return them, joined
	 */
	static String list(List<String> valid) {
		List<String> names = new ArrayList<>(valid);
		return String.join(", ", names);
	}

}
