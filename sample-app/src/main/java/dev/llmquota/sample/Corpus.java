package dev.llmquota.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.stereotype.Component;

/**
 * The bundled documents the batch summarises: forty of very different sizes, from a note
 * of 100 tokens to a contract of 10,000.
 */
@Component
public class Corpus {

	/**
	 * One document.
	 *
	 * @param name its file name
	 * @param text its text
	 */
	public record Document(String name, String text) {

	}

	private final List<Document> documents;

	public Corpus() {
		try {
			Resource[] resources = new PathMatchingResourcePatternResolver().getResources("classpath:corpus/*.txt");
			this.documents = Arrays.stream(resources)
				.sorted(Comparator.comparing(Resource::getFilename))
				.map(Corpus::read)
				.toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("The bundled corpus could not be listed", ex);
		}
	}

	/**
	 * Returns the documents, smallest first.
	 * @return the documents
	 */
	public List<Document> documents() {
		return this.documents;
	}

	private static Document read(Resource resource) {
		try {
			return new Document(resource.getFilename(),
					new String(resource.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not read " + resource, ex);
		}
	}

}
